"""blender/191: 'its size' is the object's scale or its Cube element's Size X/Y/Z (either is right)."""


def sized(event: dict, params: dict) -> bool:
    """A transform_changed of the renamed metaball to that scale, or a metaball_changed whose one element has
    that size."""
    size = [float(params["X"]), float(params["Y"]), float(params["Z"])]
    if "scale" in event:
        return event.get("name") == params["name"] and event["scale"] == size
    elements = event.get("elements") or []
    return event.get("object") == params["name"] and len(elements) == 1 and elements[0].get("size") == size
