// Exits 0 when the peer llama-server can run here (peer.mjs), else prints why and exits 1:
// run_node_test.sh skips the suites comparing with llama-server on that.
import { peerBin, usablePeer } from './peer.mjs';

const found = usablePeer();
if (!found.run) {
  console.log(`llama-server (${peerBin}) cannot be used, ${found.why}`);
  process.exit(1);
}
