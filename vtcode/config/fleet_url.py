"""Where the fleet's PostgreSQL is: VTCODE_DATABASE_URL, else `fleet.database_url` of the user
config, and never a workspace vtcode.toml, not even a trusted one.

The merged config cannot answer this: a trusted workspace's values are merged unfiltered, and a
repository must never choose where a worker, and every session's events, are sent. So the user
config file is read on its own here. Used by `vtcode fleet` and by the exporter wiring (every
session of a user who configured a fleet is mirrored into its central store).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping

from vtcode.config.layers import ConfigInvalid
from vtcode.config.load import check_text_bounds, read_config_text, user_config_path
from vtcode.errors import ConfigError

__all__ = ["fleet_database_url"]


def fleet_database_url(env: Mapping[str, str] | None = None) -> str | None:
    """The URL, or None when neither place sets one; a user config that is not TOML is a
    ConfigError located at the file."""
    env = os.environ if env is None else env
    url = env.get("VTCODE_DATABASE_URL")
    if url:
        return url
    path = user_config_path(env)
    text = read_config_text(path, required=False) if path is not None else None
    if not text:
        return None
    try:
        check_text_bounds(text, str(path))
    except ConfigInvalid as e:
        raise ConfigError(e.problems[0].message, location=e.problems[0].location) from None
    try:
        fleet = tomllib.loads(text).get("fleet", {})
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"not valid TOML: {e}", location=str(path)) from None
    value = fleet.get("database_url") if isinstance(fleet, dict) else None
    return value if isinstance(value, str) and value else None
