// Windlass for OpenCode: the hooks that Claude Code and the other hosts
// run as commands, as the plugin functions OpenCode calls around a tool.
// Before a read or an edit it runs `windlass acquire` (an edit takes the
// agent's lease on each file it writes, and is refused, naming the other
// agent, while another agent edits one); after an edit it runs
// `windlass release`, whose fresh diagnostics are added to the tool's
// result for the model. Each run gets the host's JSON on stdin, as a
// command hook does, and a failure of its own adds nothing and blocks
// nothing.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

// The launcher the other hosts' plugins run: `windlass` from PATH when
// its version fits, else the windlass-mcp package through npx or uvx.
// Beside this module in a clone; without it, `windlass` from PATH.
const LAUNCHER = fileURLToPath(new URL("../windlass/bin/run-windlass", import.meta.url));
const WINDLASS = existsSync(LAUNCHER) ? ["sh", LAUNCHER] : ["windlass"];

const READS = new Set(["read"]);
const WRITES = new Set(["edit", "write", "apply_patch", "patch"]);

// Runs `windlass ARGS` with `input` on stdin; its answer, or null.
function windlass(args, input) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(WINDLASS[0], [...WINDLASS.slice(1), ...args], {
        stdio: ["pipe", "pipe", "ignore"],
      });
    } catch {
      resolve(null);
      return;
    }
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("error", () => resolve(null));
    child.on("close", () => {
      try {
        resolve(out.trim() ? JSON.parse(out) : null);
      } catch {
        resolve(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(input));
  });
}

function context(answer) {
  return answer?.hookSpecificOutput?.additionalContext ?? null;
}

// Adds `text` to what the model reads of a tool's result.
function append(output, text) {
  if (typeof output.output === "string") {
    output.output += "\n\n" + text;
  } else if (Array.isArray(output.content)) {
    output.content.push({ type: "text", text });
  }
}

export const Windlass = async ({ directory }) => {
  // What an acquire said for a call, told with its result.
  const pending = new Map();
  const input = (event, tool, sessionID, args) => ({
    session_id: sessionID,
    cwd: directory,
    hook_event_name: event,
    tool_name: tool,
    tool_input: args,
  });
  return {
    // Windlass's MCP server comes with the plugin, unless the user's
    // configuration names one already.
    config: async (config) => {
      config.mcp ??= {};
      config.mcp.windlass ??= { type: "local", command: WINDLASS };
    },
    "tool.execute.before": async ({ tool, sessionID, callID }, output) => {
      if (!READS.has(tool) && !WRITES.has(tool)) return;
      const answer = await windlass(
        ["acquire", "--format", "opencode", "--timeout", "20"],
        input("tool.execute.before", tool, sessionID, output.args),
      );
      if (answer?.decision === "deny") throw new Error(answer.reason);
      const told = context(answer);
      if (told) pending.set(callID, told);
    },
    "tool.execute.after": async ({ tool, sessionID, callID, args }, output) => {
      const told = pending.get(callID);
      pending.delete(callID);
      if (told) append(output, told);
      if (!WRITES.has(tool)) return;
      const answer = await windlass(
        ["release", "--format", "opencode", "--grace", "3"],
        input("tool.execute.after", tool, sessionID, args),
      );
      const found = context(answer);
      if (found) append(output, found);
    },
  };
};
