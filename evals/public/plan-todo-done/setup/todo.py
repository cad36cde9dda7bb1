"""A tiny to-do list kept in todo.json (in the current folder).

    python3 todo.py add "buy milk"
    python3 todo.py list
"""

import argparse
import json
from pathlib import Path

STORE = Path("todo.json")


def load():
    if not STORE.exists():
        return []
    return json.loads(STORE.read_text())


def save(items):
    STORE.write_text(json.dumps(items, indent=2) + "\n")


def cmd_add(args):
    items = load()
    items.append({"text": args.text})
    save(items)
    print(f"added {len(items)}: {args.text}")


def cmd_list(args):
    for number, item in enumerate(load(), 1):
        print(f"{number}. {item['text']}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="todo")
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add", help="add an item")
    add.add_argument("text")
    add.set_defaults(func=cmd_add)
    show = commands.add_parser("list", help="list the items")
    show.set_defaults(func=cmd_list)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
