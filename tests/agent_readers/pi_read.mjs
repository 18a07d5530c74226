// Load a pi session file with pi's own SessionManager (what `pi --session <file>` uses) and
// print the context it resumes with, its leaf, header, labels and name as JSON.
// usage: node pi_read.mjs <node_modules dir> <session file>
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [modules, file] = process.argv.slice(2);
const pi = await import(pathToFileURL(join(modules, "@mariozechner/pi-coding-agent/dist/index.js")).href);
const manager = pi.SessionManager.open(file);
const context = manager.buildSessionContext();
const branch = manager.getBranch();
const labels = {};
for (const entry of branch) {
  const label = manager.getLabel(entry.id);
  if (label) labels[entry.id] = label;
}
process.stdout.write(JSON.stringify({
  header: manager.getHeader(), leafId: manager.getLeafId(), messages: context.messages,
  path: branch.map((e) => e.id), labels, sessionId: manager.getSessionId(),
  name: manager.getSessionName() ?? null,
}));
