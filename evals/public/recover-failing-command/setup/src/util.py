def banner(name):
    return f"== {name} =="
