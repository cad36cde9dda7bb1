"""Interactive sessions (`vtcode chat`): a prompt loop over the same runner, store and events.

`run.run_chat` wires a `session.ChatSession` (the `Interaction` of `vtcode.runtime.exec_run`)
into an ordinary run: one canonical session, one `turn.started … turn.completed|failed` pair per
USER turn, `thread.completed` when the user leaves. The modules each do one job: `terminal`
(lines and keys, Ctrl-C/Ctrl-D), `render` (the streamed conversation), `commands` (slash commands),
`permission` (`ask` rules), `plan` (plan mode and approval), `controls` (model, effort, status),
`prompts` (instruction texts), `outcomes` (how leaving maps to the interactive outcome codes).
"""
