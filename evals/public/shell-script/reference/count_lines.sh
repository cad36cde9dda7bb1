#!/usr/bin/env bash
# Print the total number of lines in the .txt files directly inside folder $1.
set -euo pipefail
dir="${1:?usage: count_lines.sh FOLDER}"
total=0
for f in "$dir"/*.txt; do
    [ -f "$f" ] || continue
    n=$(wc -l < "$f")
    total=$((total + n))
done
echo "$total"
