"""Reading MLIR locations: the user's file position inside name, call-site and fused locations."""


def file_location(loc):
    """The first `(file, line, col)` inside a location (through name, call-site and fused locations), or None."""
    if loc.is_a_file():
        return loc.filename, loc.start_line, loc.start_col
    if loc.is_a_name():
        return file_location(loc.child_loc)
    if loc.is_a_callsite():
        return file_location(loc.callee)
    if loc.is_a_fused():
        for child in loc.locations:
            if found := file_location(child):
                return found
    return None
