import unittest

from stats import mean, spread


class MeanTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 6]), 3)

    def test_mean_of_nothing(self):
        with self.assertRaises(ValueError):
            mean([])


class SpreadTest(unittest.TestCase):
    def test_spread(self):
        self.assertEqual(spread([4, -1, 7]), 8)


if __name__ == "__main__":
    unittest.main()
