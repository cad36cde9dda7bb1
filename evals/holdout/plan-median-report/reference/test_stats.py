import unittest

from stats import mean, median, spread


class MeanTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 6]), 3)

    def test_mean_of_nothing(self):
        with self.assertRaises(ValueError):
            mean([])


class SpreadTest(unittest.TestCase):
    def test_spread(self):
        self.assertEqual(spread([4, -1, 7]), 8)


class MedianTest(unittest.TestCase):
    def test_odd_count(self):
        self.assertEqual(median([7, 1, 3]), 3)

    def test_even_count(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

    def test_empty(self):
        with self.assertRaises(ValueError):
            median([])

    def test_leaves_the_list_alone(self):
        values = [3, 1, 2]
        median(values)
        self.assertEqual(values, [3, 1, 2])


if __name__ == "__main__":
    unittest.main()
