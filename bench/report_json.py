"""Reading one benchmark program's JSON results for a section of the bench report."""
import json


def read_results(path, hint=""):
    """The JSON in `path`; or, when it cannot be read or parsed, None after a line saying so
    (with `hint`, where to look instead)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"  {path}: no results ({e}{'; ' + hint if hint else ''})")
        return None
