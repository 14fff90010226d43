// Peer for bench/remote_open_bench: @huggingface/hub's parseSafetensorsMetadata on a Hub repository
// (its model.safetensors or model.safetensors.index.json and every shard's header, by Range).
// Usage: node st_metadata.mjs HUB_URL ORG/REPO. Prints one JSON line: {ok, ms, files, tensors} or {ok: false, error}.
import { parseSafetensorsMetadata } from "@huggingface/hub";

const [hubUrl, repo] = process.argv.slice(2);
const t0 = performance.now();
try {
  const r = await parseSafetensorsMetadata({ repo: { type: "model", name: repo }, hubUrl });
  const headers = r.sharded ? Object.values(r.headers) : [r.header];
  const tensors = headers.reduce((n, h) => n + Object.keys(h).filter((k) => k !== "__metadata__").length, 0);
  console.log(JSON.stringify({ ok: true, ms: performance.now() - t0, files: headers.length, tensors }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, ms: performance.now() - t0, error: String(e?.message ?? e).split("\n")[0] }));
  process.exit(1);
}
