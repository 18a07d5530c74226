// GitHub Copilot CLI's own loader of a session: its SDK (shipped inside the CLI, extracted
// to ~/.cache/copilot/pkg on first run) starts the CLI as a headless server, resumes the
// session by id (the CLI's runtime reads events.jsonl) and returns the events it loaded
// (session.getEvents) and its list of sessions (title, folder).
// usage: node copilot_read.mjs NODE_MODULES SESSION_ID CWD   (HOME, COPILOT_* from the env)
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, sessionId, cwd] = process.argv.slice(2);
const cli = join(modules, "@github", "copilot-linux-x64", "copilot");

function sdk() {
  const root = join(process.env.HOME, ".cache", "copilot", "pkg");
  if (!existsSync(root)) return null;
  for (const platform of readdirSync(root)) {
    for (const version of readdirSync(join(root, platform))) {
      const found = join(root, platform, version, "copilot-sdk", "index.js");
      if (existsSync(found)) return found;
    }
  }
  return null;
}

let found = sdk();
if (!found) {
  execFileSync(cli, ["--version"], { stdio: "ignore", env: process.env });   // extracts it
  found = sdk();
}
const { CopilotClient, approveAll } = await import(pathToFileURL(found).href);
const client = new CopilotClient({ workingDirectory: cwd,
                                   env: { ...process.env, COPILOT_CLI_PATH: cli } });
try {
  const session = await client.resumeSession(sessionId, { onPermissionRequest: approveAll });
  const events = await session.getEvents();
  const sessions = await client.listSessions();
  process.stdout.write(JSON.stringify({ events, sessions }));
  await session.disconnect?.();
} finally {
  await client.stop?.();
}
