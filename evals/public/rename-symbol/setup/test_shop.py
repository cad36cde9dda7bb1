import unittest

from shop.cart import calc_total
from shop.report import receipt


class ShopTest(unittest.TestCase):
    def test_total(self):
        self.assertEqual(calc_total([1, 2, 3]), 6)

    def test_tax(self):
        self.assertEqual(calc_total([100], tax_rate=0.2), 120.0)

    def test_receipt(self):
        self.assertEqual(receipt([10, 20]), "2 items, total 33.00")


if __name__ == "__main__":
    unittest.main()
