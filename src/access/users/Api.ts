import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../auth/Authentication.ts"
import { RequiredScope } from "../../auth/RequiredScope.ts"
import { AUTHENTICATED, PUBLIC } from "../../auth/Scopes.ts"
import { detailBody } from "../../contract/Errors.ts"
import { idPath, queryParams } from "../../contract/Params.ts"
import { IdentityProviderFailed, UserConflict, UserNotFound } from "./Errors.ts"
import {
  AuthStatus,
  CreateUser,
  LoginRequest,
  LogoutRequest,
  Me,
  RefreshRequest,
  SetupRequest,
  TokenPair,
  UpdateUser,
  UserList,
  UserView
} from "./Model.ts"

/** Sign-in routes for people (the admin UI): local users and OpenID Connect. */
export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.get("status", "/status")
      .addSuccess(AuthStatus)
      .annotate(RequiredScope, PUBLIC)
      .annotate(OpenApi.Description, "Whether first-admin setup is pending and which logins are enabled")
  )
  .add(
    HttpApiEndpoint.post("setup", "/setup")
      .setPayload(SetupRequest)
      .addSuccess(TokenPair, { status: 201 })
      .addError(detailBody(UserConflict))
      .annotate(RequiredScope, PUBLIC)
      .annotate(
        OpenApi.Description,
        "Create the first admin user; only while no user exists (409 after). With API_KEY configured it needs Authorization: Bearer <API_KEY> (401 otherwise)"
      )
  )
  .add(
    HttpApiEndpoint.post("login", "/login")
      .setPayload(LoginRequest)
      .addSuccess(TokenPair)
      .annotate(RequiredScope, PUBLIC)
      .annotate(
        OpenApi.Description,
        "Sign in with username and password: an access token (1 h) and a refresh token (with Cairn-Refresh-Cookie: 1, in an HttpOnly cookie for /auth/refresh instead of the body)"
      )
  )
  .add(
    HttpApiEndpoint.post("refresh", "/refresh")
      .setPayload(RefreshRequest)
      .addSuccess(TokenPair)
      .annotate(RequiredScope, PUBLIC)
      .annotate(
        OpenApi.Description,
        "Exchange a refresh token (the body's, else with Cairn-Refresh-Cookie: 1 the cookie's) for new tokens; the old refresh token is spent"
      )
  )
  .add(
    HttpApiEndpoint.post("logout", "/logout")
      .setPayload(LogoutRequest)
      .annotate(RequiredScope, PUBLIC)
      .annotate(
        OpenApi.Description,
        "End the session of a refresh token, or with everywhere every session of its user (or of the bearer user token); its access tokens lapse within their life. With Cairn-Refresh-Cookie: 1 the refresh cookie is cleared"
      )
  )
  .add(
    HttpApiEndpoint.get("me", "/me")
      .addSuccess(Me)
      .annotate(RequiredScope, AUTHENTICATED)
      .annotate(OpenApi.Description, "Who the credentials belong to and the scopes they grant")
  )
  .add(
    HttpApiEndpoint.get("oidcStart", "/oidc/start")
      .setUrlParams(queryParams({ app: Schema.optional(Schema.Literal("1")) }))
      .addSuccess(Schema.Void, { status: 302 })
      .addError(detailBody(IdentityProviderFailed))
      .annotate(RequiredScope, PUBLIC)
      .annotate(
        OpenApi.Description,
        "Start OpenID Connect login: redirects to the identity provider; with app=1 the callback puts the refresh token into the web app's cookie and redirects to /"
      )
  )
  .add(
    HttpApiEndpoint.get("oidcCallback", "/oidc/callback")
      .setUrlParams(
        queryParams({
          code: Schema.optional(Schema.String),
          state: Schema.optional(Schema.String),
          error: Schema.optional(Schema.String),
          error_description: Schema.optional(Schema.String)
        })
      )
      .addSuccess(TokenPair)
      .addError(detailBody(IdentityProviderFailed))
      .annotate(RequiredScope, PUBLIC)
      .annotate(OpenApi.Description, "Where the identity provider sends the user back: answers the session's tokens")
  )
  .addError(detailBody(UserNotFound))
  .middleware(Authentication)
  .prefix("/auth")
  .annotate(OpenApi.Title, "Sign-in")
{}

const UserId = idPath("User")

export class UsersApi extends HttpApiGroup.make("users")
  .add(
    HttpApiEndpoint.get("list", "/users")
      .addSuccess(UserList)
      .annotate(RequiredScope, "users:read")
      .annotate(OpenApi.Description, "List users")
  )
  .add(
    HttpApiEndpoint.post("create", "/users")
      .setPayload(CreateUser)
      .addSuccess(UserView, { status: 201 })
      .addError(detailBody(UserConflict))
      .annotate(RequiredScope, "users:write")
      .annotate(OpenApi.Description, "Create a local user (role admin or member; admin needs the admin scope)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/users/:id")
      .setPath(UserId)
      .setPayload(UpdateUser)
      .addSuccess(UserView)
      .annotate(RequiredScope, "users:write")
      .annotate(OpenApi.Description, "Change a user's role or password; promoting to admin or touching an admin needs admin")
  )
  .add(
    HttpApiEndpoint.del("delete", "/users/:id")
      .setPath(UserId)
      .annotate(RequiredScope, "users:write")
      .annotate(OpenApi.Description, "Delete a user and end their sessions; deleting an admin needs admin")
  )
  .addError(detailBody(UserNotFound))
  .middleware(Authentication)
  .prefix("/api/v1/admin")
  .annotate(OpenApi.Title, "Users")
{}
