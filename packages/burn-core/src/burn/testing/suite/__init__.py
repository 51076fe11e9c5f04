"""The conformance tests (``test_*.py``); run with ``pytest --pyargs burn.testing --burn-backend NAME``.

One home per op family (`burn.backend.ops`): ``test_<family>.py`` or ``test_<family>_<aspect>.py``
(``test_conv.py``, ``test_float_reduce.py``) hold the tests of that family's ops, and
``test_<family>_gradients.py`` their gradient tests. Tests of one op on every kind
(``test_shape.py``, ``test_indexing.py``, ``test_sort.py``, ``test_casts.py``, ``test_numeric.py``)
and of a property across families (``test_errors.py``, ``test_dtype_promotion.py``...) are in
modules named by their topic; ``test_meta.py`` checks the layout.
"""
