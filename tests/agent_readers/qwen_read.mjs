// Load a Qwen Code session with Qwen Code's own SessionService (what `qwen --resume <id>`
// loads: the records on the path from the root to the file's last record) and print the
// records, the title it lists the session under, and its folder as JSON.
// usage: node qwen_read.mjs <node_modules dir> <session id> <project folder>
// (Qwen Code is bundled in chunks whose names change per version: the one that defines
// SessionService is found by its text.)
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, sessionId, cwd] = process.argv.slice(2);
const chunks = join(modules, "@qwen-code/qwen-code/chunks");
const chunk = readdirSync(chunks).find((name) => name.endsWith(".js") &&
  readFileSync(join(chunks, name), "utf8").includes("var SessionService = class"));
if (!chunk) throw new Error("no chunk of Qwen Code defines SessionService");
const { SessionService } = await import(pathToFileURL(join(chunks, chunk)).href);
const service = new SessionService(cwd);
const loaded = await service.loadSession(sessionId);
if (!loaded) throw new Error(`Qwen Code does not load session ${sessionId} from ${cwd}`);
const title = await service.getSessionTitleInfo(sessionId);
process.stdout.write(JSON.stringify({
  records: loaded.conversation.messages, sessionId: loaded.conversation.sessionId,
  title: title ?? null,
}));
