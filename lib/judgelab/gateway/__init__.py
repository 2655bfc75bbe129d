"""judgelab.gateway: the only thing in the project that talks to a model.

```python
from judgelab.gateway import Gateway, ChatRequest, Message, Sampling
gw = Gateway.from_settings()          # env JUDGELAB_* -> embedded llamacpp SmolLM2-135M
res = gw.chat(ChatRequest(messages=[Message(role="user", content="...")], schema=MyModel))
```

Its parts, each in its own module and put together by :class:`~judgelab.gateway.core.Gateway`:
the cache lookup (:mod:`.lookup`), the fresh call and its sender (:mod:`.fresh`), the call that
joins them (:mod:`.call`), batch mode (:mod:`.batch_mode`), the fan-out (:mod:`.fanout`), the
canary (:mod:`.canary`) and the per-thread call context (:mod:`.context`).
CLI: ``python -m judgelab.gateway stats|export|import``.
"""
from judgelab.gateway.cache import ResponseCache, request_key
from judgelab.gateway.core import Gateway
from judgelab.gateway.errors import (
    ConfigError, ContextOverflowError, EndpointUnreachableError, GatewayError, ReplayMissError,
)
from judgelab.gateway.ledger import PriceTable
from judgelab.gateway.retry import RetryPolicy
from judgelab.gateway.types import ChatRequest, ChatResult, Message, Sampling, Usage

__all__ = [
    "Gateway", "ChatRequest", "ChatResult", "Message", "Sampling", "Usage", "ResponseCache", "request_key",
    "GatewayError", "ConfigError", "ContextOverflowError", "EndpointUnreachableError", "ReplayMissError",
    "PriceTable", "RetryPolicy",
]
