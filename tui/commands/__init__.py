"""arbor's commands, one module each; `tui/cli.py` registers them and dispatches.

A subcommand module is small and imports nothing heavy at module level (it is loaded only
when its command runs). It provides:

- `configure(parser)`: sets the description and adds the arguments to an
  `argparse.ArgumentParser` whose prog is already `arbor NAME`;
- `run(args) -> int`: does the work and returns the exit status (see `shared.EXIT_*`);
- optionally `INTERRUPTED`: what Ctrl-C leaves behind, said after "arbor NAME: interrupted; ".
  SIGTERM and SIGHUP stop a command as Ctrl-C does (`cli.Stopped`, a KeyboardInterrupt),
  with the status 128 + the signal's number;
- optionally `KEEPS_SIGNALS = True`: they keep their usual effect instead (`resume`).

What commands share (exit statuses, `--db`, "open the store or explain why") is in
`shared.py`; the import report is printed by `import_report.py`.
"""
