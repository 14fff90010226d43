# The tests that run longest, with their cost (seconds, roughly, under AddressSanitizer on 2 cores; the
# release build runs them 2-4x faster): `ctest -j` starts the tests of highest COST first. A fresh
# build (CI) has no timings of earlier runs, and without this it ran them in the order they are
# numbered: the fuzz replays and the remote cases last, one of them alone on one core for its last
# minute. ctest includes this file after the tests are discovered (tests/CMakeLists.txt); a name a
# build does not have (signals.* under the sanitizers, a skipped area) is ignored.
set(akview_long_tests
  "RemoteOpen.EveryOracleModelAnswersAsOnDisk 120"
  "signals.RemoteOpen.EveryOracleModelAnswersAsOnDisk 110"
  "RemoteOpen.EveryDemoModelAnswersAsOnDisk 50"
  "signals.RemoteOpen.EveryDemoModelAnswersAsOnDisk 45"
  # release build only (skipped under the sanitizers): 13 s there
  "ReadOnly.InputsAreOpenedReadOnlyAndNeverWritten 13"
  "ReadOnly.EveryBatchCommandLeavesEveryInputUntouched 26"
  "ResourceCaps.PickleBytesOverTheCapAreRefusedNamingTheCap 25"
  "ResourceCaps.PickleTensorsOverTheCapAreRefusedNamingTheCap 20"
  "RemoteOpen.AHeaderThatCannotBeFetchedIsAnErrorNotASignal 17"
  "signals.RemoteOpen.AHeaderThatCannotBeFetchedIsAnErrorNotASignal 12"
  "StreamingJsonLong.ChunkedTensorsJsonIsTheDocumentedDocumentByteForByte 17"
  "PyTorch.DamagedCheckpointsFailCleanly 14"
  "RemoteOpen.WhereUserfaultfdIsRefusedSignalsGiveTheSameAnswers 13"
  "ResourceLimits.MalformedAndFuzzFoundInputsEndWithAVerdictUnderCaps 13"
  "ValueCommands.DumpEqualsTheReferenceBitForBit 12"
  "StreamingJsonLong.ChunkedTextAndCsvListEveryRowInOrder 11"
  "Install.ZshCompletionLoads 9")
foreach(entry IN LISTS akview_long_tests)
  string(REPLACE " " ";" entry "${entry}")
  list(GET entry 0 name)
  list(GET entry 1 cost)
  set_tests_properties("${name}" PROPERTIES COST ${cost})
endforeach()
