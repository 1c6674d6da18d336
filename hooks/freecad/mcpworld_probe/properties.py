"""Which of a FreeCAD object's properties a state read keeps: read by the probe inside FreeCAD (state.py) and by
the state query from a saved file when FreeCAD is gone (apps/freecad/state_query.py), so both read the same.
Imports nothing of FreeCAD's."""

# property types kept in a read (numbers, text, choices, links by name); the rest (shapes, lists of
# points, expressions) are summarised elsewhere or left out
PLAIN = {"App::PropertyLength", "App::PropertyDistance", "App::PropertyFloat", "App::PropertyAngle",
         "App::PropertyInteger", "App::PropertyIntegerConstraint", "App::PropertyFloatConstraint",
         "App::PropertyBool", "App::PropertyEnumeration", "App::PropertyString", "App::PropertyQuantity",
         "App::PropertyQuantityConstraint", "App::PropertyPercent", "App::PropertyLink",
         "App::PropertyPrecision", "App::PropertyAcceleration", "App::PropertyLinkSub",
         "App::PropertyLinkSubList", "App::PropertyLinkList", "App::PropertyLinkSubListHidden"}
SKIP = {"Label", "Label2", "Visibility", "ExpressionEngine", "Placement", "Shape", "_Body", "Group",
        "Origin", "Tip", "BaseFeature", "AddSubShape", "SuppressedShape", "Support", "MapMode"}
