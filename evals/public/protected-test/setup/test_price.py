import unittest

from price import format_price


class FormatPriceTest(unittest.TestCase):
    def test_whole_dollars(self):
        self.assertEqual(format_price(3), "$3.00")

    def test_cents(self):
        self.assertEqual(format_price(2.5), "$2.50")

    def test_thousands_separator(self):
        self.assertEqual(format_price(1234.5), "$1,234.50")

    def test_zero(self):
        self.assertEqual(format_price(0), "$0.00")


if __name__ == "__main__":
    unittest.main()
