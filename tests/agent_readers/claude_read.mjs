// Load a Claude Code transcript with Claude Code's own reader (the Agent SDK's
// getSessionMessages / getSessionInfo) and print what it returns as JSON.
// usage: node claude_read.mjs <node_modules dir> <session uuid> <project dir>
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [modules, sessionId, dir] = process.argv.slice(2);
const sdk = await import(pathToFileURL(join(modules, "@anthropic-ai/claude-agent-sdk/sdk.mjs")).href);
const messages = await sdk.getSessionMessages(sessionId, { dir });
const info = await sdk.getSessionInfo(sessionId, { dir });
process.stdout.write(JSON.stringify({ messages, info }));
