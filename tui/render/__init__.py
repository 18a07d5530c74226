"""Drawing what the store holds: message text and its forms (tool calls, Claude Code's
bookkeeping lines, thinking, summaries as markdown), cutting and formatting figures, the
HTML export, and the one sanitiser every untrusted string passes through (safe_text).

No store and no app here: each module is given what it draws. Nothing is imported from this
package's __init__, so that the first frame loads only the modules it draws with."""
