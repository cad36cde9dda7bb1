from src.util import banner


def run():
    print(banner("app"))
