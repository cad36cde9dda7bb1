import unittest

from pricing import discount_rate, order_total


class DiscountTest(unittest.TestCase):
    def test_small_order_pays_full_price(self):
        self.assertEqual(discount_rate(3), 0.0)

    def test_ten_units(self):
        self.assertEqual(discount_rate(10), 0.05)

    def test_fifty_units(self):
        self.assertEqual(discount_rate(50), 0.10)

    def test_large_order(self):
        self.assertEqual(discount_rate(150), 0.15)

    def test_order_total(self):
        self.assertEqual(order_total(2.0, 50), 90.0)


if __name__ == "__main__":
    unittest.main()
