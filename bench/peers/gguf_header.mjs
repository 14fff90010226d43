// Peer for bench/remote_open_bench: @huggingface/gguf's gguf() on the URL of a GGUF file (its header
// and tensor infos, read by Range in 2 MB chunks).
// Usage: node gguf_header.mjs URL. Prints one JSON line: {ok, ms, tensors} or {ok: false, error}.
import { gguf } from "@huggingface/gguf";

const [url] = process.argv.slice(2);
const t0 = performance.now();
try {
  const r = await gguf(url);
  console.log(JSON.stringify({ ok: true, ms: performance.now() - t0, files: 1, tensors: r.tensorInfos.length }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, ms: performance.now() - t0, error: String(e?.message ?? e).split("\n")[0] }));
  process.exit(1);
}
