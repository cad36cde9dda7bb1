"""The built-in tools and what the loop needs around them.

- `registry`: `ToolRegistry` (ordered specs, `catalog_hash`, schema validation) and
  `default_registry()`; call `registry.close()` at session end to kill exec sessions.
- `permissions`: `PermissionPolicy.from_config(cfg).check(tool, args) -> PermissionVerdict`.
- `exec_sessions` / `exec_tools`: `exec_command` and `write_stdin` (waits, spool files).
- `files` / `patch`: read_file, list_files, grep, write_file, apply_patch.
- `paths`: workspace confinement shared by all of them.
"""
