/**
 * The whole HTTP API as one definition: every domain's group, and the error responses any
 * endpoint may give. The OpenAPI document, the typed client and the endpoint catalogue all derive
 * from it.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { ApiKeysApi } from "./access/keys/Api.ts"
import { AuthApi, UsersApi } from "./access/users/Api.ts"
import { WidgetApi } from "./access/widget/Api.ts"
import { AttachmentsApi } from "./attachments/Api.ts"
import { BindingsApi } from "./bindings/Api.ts"
import { BotsApi } from "./bots/Api.ts"
import { BudgetsApi } from "./budgets/Api.ts"
import { CarapacesApi } from "./carapaces/Api.ts"
import { ChannelsApi } from "./channels/Api.ts"
import { ChannelMessagesApi, ChatApi } from "./chat/Api.ts"
import { SessionDocumentsApi } from "./chat/SessionDocumentsApi.ts"
import { ErrorResponses } from "./contract/Errors.ts"
import { cairnVersion } from "./contract/Version.ts"
import { DiscoverApi } from "./discover/Api.ts"
import { DocumentsApi } from "./documents/Api.ts"
import { RepositoryApi } from "./gitrepo/Api.ts"
import { HealthApi, MetricsApi } from "./health/Api.ts"
import { HeartbeatsApi } from "./heartbeats/Api.ts"
import { DeadLettersApi } from "./inbound/Api.ts"
import { IntegrationsApi } from "./integrations/Api.ts"
import { LogsApi } from "./logs/Api.ts"
import { McpApi } from "./mcp/Api.ts"
import { McpServerApi } from "./mcpserver/Api.ts"
import { OpenAiApi } from "./openai/Api.ts"
import { OperationsApi } from "./operations/Api.ts"
import { LlmApi, ProvidersApi } from "./providers/Api.ts"
import { RunsApi } from "./runs/Api.ts"
import { SessionsApi } from "./sessions/Api.ts"
import { SettingsApi } from "./settings/Api.ts"
import { SkillsApi } from "./skills/Api.ts"
import { SpeechApi } from "./speech/Api.ts"
import { InjectionApi, TasksApi } from "./tasks/Api.ts"
import { TodosApi } from "./todos/Api.ts"
import { UsageApi } from "./usage/Api.ts"
import { WorkflowsApi } from "./workflows/Api.ts"
import { WorkspacesApi } from "./workspaces/Api.ts"

export class CairnApi extends HttpApi.make("cairn")
  .add(HealthApi)
  .add(MetricsApi)
  .add(SettingsApi)
  .add(DiscoverApi)
  .add(ApiKeysApi)
  .add(AuthApi)
  .add(UsersApi)
  .add(WidgetApi)
  .add(BotsApi)
  .add(ChannelsApi)
  .add(ChannelMessagesApi)
  .add(SessionsApi)
  .add(ChatApi)
  .add(RunsApi)
  .add(SpeechApi)
  .add(IntegrationsApi)
  .add(ProvidersApi)
  .add(LlmApi)
  .add(DocumentsApi)
  .add(SessionDocumentsApi)
  .add(UsageApi)
  .add(BudgetsApi)
  .add(InjectionApi)
  .add(TasksApi)
  .add(DeadLettersApi)
  .add(BindingsApi)
  .add(WorkspacesApi)
  .add(CarapacesApi)
  .add(SkillsApi)
  .add(TodosApi)
  .add(LogsApi)
  .add(AttachmentsApi)
  .add(OperationsApi)
  .add(RepositoryApi)
  .add(HeartbeatsApi)
  .add(WorkflowsApi)
  .add(OpenAiApi)
  .add(McpServerApi)
  .add(McpApi)
  .addError(ErrorResponses.validation)
  .addError(ErrorResponses.unauthorized)
  .addError(ErrorResponses.forbidden)
  .addError(ErrorResponses.notFound)
  .addError(ErrorResponses.tooManyRequests)
  .addError(ErrorResponses.overloaded)
  .annotate(OpenApi.Title, "Cairn")
  .annotate(OpenApi.Version, cairnVersion)
  .annotate(
    OpenApi.Description,
    "Self-hosted agent server. Authenticate with `Authorization: Bearer <key>`; each operation names its scope in `x-required-scope`."
  )
{}
