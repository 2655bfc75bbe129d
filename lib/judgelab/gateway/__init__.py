"""judgelab.gateway: the only thing in the project that talks to a model.

```python
from judgelab.gateway import Gateway, ChatRequest, Message, Sampling
gw = Gateway.from_settings()          # env JUDGELAB_* -> embedded llamacpp SmolLM2-135M
res = gw.chat(ChatRequest(messages=[Message(role="user", content="...")], schema=MyModel))
```

Backends (``llamacpp``, ``openai``, ``openai-compatible``), structured output with bounded repair
retries, a SQLite cache with replay, retries with backoff, rate limits, a cost ledger and
transcripts, a circuit breaker for dead endpoints, and the API key redacted from every file it
writes. ``tests/fake_openai_server.py`` is a scriptable local chat-completions server for
tests. CLI: ``python -m judgelab.gateway {stats,export,import}``.
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
