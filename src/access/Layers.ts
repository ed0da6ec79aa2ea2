/**
 * The access-control services and routes as two layers, so the composition root wires them in one
 * line each. Each service brings its own dependencies; the root provides AppConfig, the database
 * and the server secret.
 */
import { Layer } from "effect"
import { DiscoverHttpLive } from "../discover/Http.ts"
import * as Authenticator from "./Authenticator.ts"
import { ClientAddress } from "./ClientAddress.ts"
import * as Cors from "./Cors.ts"
import { ApiKeys } from "./keys/ApiKeys.ts"
import { ApiKeysHttpLive } from "./keys/Http.ts"
import { RateLimiter } from "./RateLimit.ts"
import { Tokens } from "./Tokens.ts"
import { AuthHttpLive, UsersHttpLive } from "./users/Http.ts"
import { Invitations } from "./users/Invitations.ts"
import { Oidc } from "./users/Oidc.ts"
import { UserGate } from "./users/UserGate.ts"
import { Users } from "./users/Users.ts"
import { WidgetHttpLive } from "./widget/Http.ts"
import { Widgets } from "./widget/Widgets.ts"

/** Authenticator, client addresses, keys, tokens, users, OpenID login, widget tokens and the rate limiter. */
export const AuthServicesLive = Layer.mergeAll(
  Authenticator.layer,
  ClientAddress.Default,
  ApiKeys.Default,
  Tokens.Default,
  RateLimiter.Default,
  Users.Default,
  UserGate.Default,
  Invitations.Default,
  Oidc.Default,
  Widgets.Default
)

/** The routes of keys, discovery, sign-in, users and widget tokens, and the CORS middleware. */
export const AccessHttpLive = Layer.mergeAll(
  ApiKeysHttpLive,
  DiscoverHttpLive,
  AuthHttpLive,
  UsersHttpLive,
  WidgetHttpLive,
  Cors.layer
)
