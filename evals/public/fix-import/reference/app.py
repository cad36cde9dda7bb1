from textutils import slugify

TITLES = ["Hello, World!", "vtcode eval suite", "  Spaces   everywhere  "]

for title in TITLES:
    print(slugify(title))
