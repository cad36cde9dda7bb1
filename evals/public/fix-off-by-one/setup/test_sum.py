import unittest

from sum_to import sum_to


class SumToTest(unittest.TestCase):
    def test_zero(self):
        self.assertEqual(sum_to(0), 0)

    def test_one(self):
        self.assertEqual(sum_to(1), 1)

    def test_four(self):
        self.assertEqual(sum_to(4), 10)


if __name__ == "__main__":
    unittest.main()
