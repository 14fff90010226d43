// STUB: replaced by the SafeTensors fixture writer.
namespace akview::testing {}
