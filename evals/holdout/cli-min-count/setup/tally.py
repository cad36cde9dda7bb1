"""Count the words of a text file, most frequent first.

python3 tally.py poem.txt
"""

import argparse
import re
from collections import Counter


def count_words(text):
    return Counter(re.findall(r"[a-z']+", text.lower()))


def main(argv=None):
    parser = argparse.ArgumentParser(description="Count the words of a text file.")
    parser.add_argument("file", help="the text file to read")
    args = parser.parse_args(argv)
    with open(args.file, encoding="utf-8") as f:
        counts = count_words(f.read())
    for word, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        print(f"{n:>5} {word}")


if __name__ == "__main__":
    main()
