"""The models: sentence embedders (:mod:`fastmem.models.embedder`: the protocol and MiniLM,
through ONNX Runtime in :mod:`fastmem.models.onnx_minilm` or NumPy in
:mod:`fastmem.models.minilm`; the model2vec static embedder in
:mod:`fastmem.models.model2vec`) and the native calls a process exit must not cut in half
(:mod:`fastmem.models.exitgate`). Nothing here knows about a store."""
