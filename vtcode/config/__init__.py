"""vtcode.toml: the model (`model`), loading and layering (`load`), edits (`edit`).

Nothing is imported here, so `from vtcode.config.model import ...` stays cheap.
"""
