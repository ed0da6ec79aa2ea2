/**
 * Known providers, as a user adds them: the API family, the base URL, whether a key is needed and
 * where its models are listed. The console's provider dialog and `cairn providers add` offer them;
 * part of the contract (no server code), so a browser and the CLI import it.
 */
import type { ProviderType } from "./Model.ts"

export interface ProviderPreset {
  /** Also the id suggested for the provider. */
  readonly id: string
  readonly label: string
  readonly type: ProviderType
  readonly baseUrl: string
  /** "required": the service refuses calls without one; "optional": a local server, a key only if it was set up with one. */
  readonly key: "required" | "optional"
  /** Where the provider lists its models (what `GET /api/v1/admin/providers/{id}/models` reads). */
  readonly modelList: string
  /** A model to start with. */
  readonly exampleModel: string
  /** Where the user gets a key, or how to run the server. */
  readonly hint: string
}

export const providerPresets: ReadonlyArray<ProviderPreset> = [
  {
    id: "openai",
    label: "OpenAI",
    type: "openai",
    baseUrl: "https://api.openai.com/v1",
    key: "required",
    modelList: "GET /v1/models",
    exampleModel: "gpt-4.1-mini",
    hint: "A key from platform.openai.com/api-keys"
  },
  {
    id: "anthropic",
    label: "Anthropic (Claude)",
    type: "anthropic",
    baseUrl: "https://api.anthropic.com",
    key: "required",
    modelList: "GET /v1/models",
    exampleModel: "claude-sonnet-4-5",
    hint: "A key from console.anthropic.com; extended thinking and prompt caching work natively"
  },
  {
    id: "gemini",
    label: "Google Gemini",
    type: "gemini",
    baseUrl: "https://generativelanguage.googleapis.com",
    key: "required",
    modelList: "GET /v1beta/models",
    exampleModel: "gemini-2.5-flash",
    hint: "A key from aistudio.google.com/apikey"
  },
  {
    id: "openrouter",
    label: "OpenRouter",
    type: "openai",
    baseUrl: "https://openrouter.ai/api/v1",
    key: "required",
    modelList: "GET /v1/models",
    exampleModel: "anthropic/claude-sonnet-4.5",
    hint: "One key for hundreds of models, from openrouter.ai/keys"
  },
  {
    id: "ollama",
    label: "Ollama",
    type: "openai",
    baseUrl: "http://localhost:11434/v1",
    key: "optional",
    modelList: "GET /v1/models, else Ollama's GET /api/tags",
    exampleModel: "qwen3:8b",
    hint: "Local models: `ollama serve`, then `ollama pull <model>`"
  },
  {
    id: "vllm",
    label: "vLLM",
    type: "openai",
    baseUrl: "http://localhost:8000/v1",
    key: "optional",
    modelList: "GET /v1/models",
    exampleModel: "Qwen/Qwen3-8B",
    hint: "`vllm serve <model>`; a key only if started with --api-key (Cairn listens on 8000 too: give one of them another port)"
  },
  {
    id: "lmstudio",
    label: "LM Studio",
    type: "openai",
    baseUrl: "http://localhost:1234/v1",
    key: "optional",
    modelList: "GET /v1/models",
    exampleModel: "qwen3-8b",
    hint: "Start the server in LM Studio's Developer tab"
  },
  {
    id: "llamacpp",
    label: "llama.cpp server",
    type: "openai",
    baseUrl: "http://localhost:8080/v1",
    key: "optional",
    modelList: "GET /v1/models",
    exampleModel: "default",
    hint: "`llama-server -m <model.gguf>`; a key only if started with --api-key"
  },
  {
    id: "groq",
    label: "Groq",
    type: "openai",
    baseUrl: "https://api.groq.com/openai/v1",
    key: "required",
    modelList: "GET /v1/models",
    exampleModel: "llama-3.3-70b-versatile",
    hint: "A key from console.groq.com/keys"
  },
  {
    id: "mistral",
    label: "Mistral",
    type: "openai",
    baseUrl: "https://api.mistral.ai/v1",
    key: "required",
    modelList: "GET /v1/models",
    exampleModel: "mistral-small-latest",
    hint: "A key from console.mistral.ai/api-keys"
  },
  {
    id: "deepseek",
    label: "DeepSeek",
    type: "openai",
    baseUrl: "https://api.deepseek.com/v1",
    key: "required",
    modelList: "GET /v1/models",
    exampleModel: "deepseek-chat",
    hint: "A key from platform.deepseek.com; deepseek-reasoner's reasoning arrives as thinking"
  },
  {
    id: "together",
    label: "Together AI",
    type: "openai",
    baseUrl: "https://api.together.xyz/v1",
    key: "required",
    modelList: "GET /v1/models",
    exampleModel: "meta-llama/Llama-3.3-70B-Instruct-Turbo",
    hint: "A key from api.together.ai/settings/api-keys"
  }
]

export const presetById = (id: string): ProviderPreset | undefined => providerPresets.find((preset) => preset.id === id)
