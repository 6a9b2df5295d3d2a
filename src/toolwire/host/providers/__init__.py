"""Model providers: one module per model API, each imported (with its SDK) only when used.

- :class:`~.openai.OpenAIProvider`: OpenAI-compatible Chat Completions (``pip install
  toolwire[openai]``): OpenAI, DeepSeek, and any compatible server (vLLM, Ollama, LM Studio).
- :class:`~.anthropic.AnthropicProvider`: Anthropic Messages (``pip install toolwire[anthropic]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .anthropic import AnthropicProvider
    from .openai import OpenAIProvider

__all__ = ["AnthropicProvider", "OpenAIProvider"]


def __getattr__(name: str) -> Any:
    if name == "OpenAIProvider":
        from .openai import OpenAIProvider

        return OpenAIProvider
    if name == "AnthropicProvider":
        from .anthropic import AnthropicProvider

        return AnthropicProvider
    raise AttributeError(name)
