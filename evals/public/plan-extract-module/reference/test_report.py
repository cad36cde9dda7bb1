import unittest

from report import build_report
from rows import format_row, parse_line


class ReportTest(unittest.TestCase):
    def test_parse_line(self):
        self.assertEqual(parse_line("apple,3,0.5"), ("apple", 3, 0.5))
        self.assertIsNone(parse_line("# comment"))

    def test_format_row(self):
        self.assertEqual(format_row("kiwi", 4, 0.25).split(), ["kiwi", "4", "1.00"])

    def test_build_report_sorts_by_value(self):
        rows = build_report(["a,1,1.0", "b,1,5.0"])
        self.assertTrue(rows[0].startswith("b"))
        self.assertEqual(rows[-1].split(), ["TOTAL", "6.00"])


if __name__ == "__main__":
    unittest.main()
