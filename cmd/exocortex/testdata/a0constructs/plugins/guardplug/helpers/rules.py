FORBIDDEN = ("secret.txt", "rm -rf")


def forbidden(text: str) -> bool:
    return any(f in text for f in FORBIDDEN)
