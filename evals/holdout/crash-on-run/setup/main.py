"""Monthly totals of expenses.txt: python3 main.py"""

from pathlib import Path

from ledger import monthly_totals


def main():
    lines = Path("expenses.txt").read_text(encoding="utf-8").splitlines()
    totals = monthly_totals(lines)
    for (year, month), total in sorted(totals.items()):
        print(f"{year}-{month:02d} {total:10.2f}")
    print(f"total   {sum(totals.values()):10.2f}")


if __name__ == "__main__":
    main()
