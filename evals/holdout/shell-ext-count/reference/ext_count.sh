#!/usr/bin/env bash
# Count the regular files directly inside DIR by extension: one "EXT COUNT" line per
# extension, sorted. Names without a dot, hidden files and subfolders are left out.
set -euo pipefail
dir="${1:?usage: ext_count.sh DIR}"
declare -A counts=()
for path in "$dir"/*; do
    [ -f "$path" ] || continue
    name="${path##*/}"
    case "$name" in
        *.*) ;;
        *) continue ;;
    esac
    ext="${name##*.}"
    [ -n "$ext" ] || continue
    counts["$ext"]=$(( ${counts["$ext"]:-0} + 1 ))
done
for ext in "${!counts[@]}"; do
    printf '%s %s\n' "$ext" "${counts[$ext]}"
done | LC_ALL=C sort
