import unittest

from duration import parse_duration


class ParseDurationTest(unittest.TestCase):
    def test_hours_and_minutes(self):
        self.assertEqual(parse_duration("1h30m"), 5400)

    def test_seconds(self):
        self.assertEqual(parse_duration("45s"), 45)

    def test_upper_case_and_spaces(self):
        self.assertEqual(parse_duration(" 2H "), 7200)

    def test_all_units(self):
        self.assertEqual(parse_duration("1h1m1s"), 3661)

    def test_minutes(self):
        self.assertEqual(parse_duration("90m"), 5400)

    def test_rejects_garbage(self):
        for bad in ["", "abc", "5", "1x", "h1"]:
            with self.assertRaises(ValueError, msg=bad):
                parse_duration(bad)


if __name__ == "__main__":
    unittest.main()
