import contextlib
import io
import os
import tempfile
import unittest

import todo


class TodoTest(unittest.TestCase):
    def setUp(self):
        self.old_cwd = os.getcwd()
        self.tmp = tempfile.TemporaryDirectory()
        os.chdir(self.tmp.name)

    def tearDown(self):
        os.chdir(self.old_cwd)
        self.tmp.cleanup()

    def run_todo(self, *argv):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            todo.main(list(argv))
        return out.getvalue()

    def test_add_stores_item(self):
        self.run_todo("add", "buy milk")
        self.assertEqual(todo.load(), [{"text": "buy milk"}])

    def test_list_numbers_items(self):
        self.run_todo("add", "a")
        self.run_todo("add", "b")
        self.assertIn("2.", self.run_todo("list"))

    def test_done_marks_item(self):
        self.run_todo("add", "a")
        self.run_todo("add", "b")
        self.run_todo("done", "2")
        self.assertEqual(todo.load(), [{"text": "a"}, {"text": "b", "done": True}])
        self.assertIn("2. [x] b", self.run_todo("list"))
        self.assertIn("1. [ ] a", self.run_todo("list"))


if __name__ == "__main__":
    unittest.main()
