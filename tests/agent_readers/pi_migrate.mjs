// Open pi session files with pi's own SessionManager, as `pi --session <file>` does: a file
// of an older version is migrated to the current one and rewritten in place (pi's
// `migrateToCurrentVersion` then `_rewriteFile`). Prints {} (the tests read the files).
// usage: node pi_migrate.mjs <node_modules dir> <session file>...
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [modules, ...files] = process.argv.slice(2);
const pi = await import(pathToFileURL(join(modules, "@mariozechner/pi-coding-agent/dist/index.js")).href);
for (const file of files) pi.SessionManager.open(file);
process.stdout.write("{}");
