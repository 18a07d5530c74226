// Load a Gemini CLI session the way `gemini --resume <id>` does, with Gemini CLI's own code:
// its SessionSelector finds the session of the project by id (in ~/.gemini/tmp/<project>/
// chats, through its Storage and project registry), loadConversationRecord reads the file,
// and convertSessionToClientHistory makes the history it sends the model. Prints that
// history, the session's summary (the name it is listed under) and its header as JSON.
// usage: node gemini_read.mjs <node_modules dir> <session id> <project folder>
// (Gemini CLI is bundled in chunks whose names change per version: the ones that define
// what is used are found by their text.)
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, sessionId, cwd] = process.argv.slice(2);
const bundle = join(modules, "@google/gemini-cli/bundle");
const find = (text) => {
  const name = readdirSync(bundle).find((file) => file.startsWith("chunk-") &&
    file.endsWith(".js") && readFileSync(join(bundle, file), "utf8").includes(text));
  if (!name) throw new Error(`no chunk of Gemini CLI defines ${text}`);
  return import(pathToFileURL(join(bundle, name)).href);
};
const core = await find("function convertSessionToClientHistory(");
const cli = await find("var SessionSelector = class");
process.chdir(cwd);
const storage = new core.Storage(cwd);
await storage.initialize?.();
const selector = new cli.SessionSelector(storage);
const found = await selector.resolveSession(sessionId);
const data = found.sessionData;
process.stdout.write(JSON.stringify({
  sessionId: data.sessionId, summary: data.summary ?? null, path: found.sessionPath,
  history: core.convertSessionToClientHistory(data.messages).map((item) => item.content),
  handoff: data.handoff ?? null,
}));
