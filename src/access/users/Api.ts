import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../auth/Authentication.ts"
import { RequiredScope } from "../../auth/RequiredScope.ts"
import { AUTHENTICATED, PUBLIC } from "../../auth/Scopes.ts"
import { detailBody } from "../../contract/Errors.ts"
import { idPath, pathParams, queryParams } from "../../contract/Params.ts"
import { IdentityProviderFailed, InvitationNotFound, InvitationSpent, UserConflict, UserNotFound } from "./Errors.ts"
import {
  AcceptInvitation,
  AuthStatus,
  ChangePassword,
  CreatedInvitation,
  CreateInvitation,
  CreateResetLink,
  CreateUser,
  InvitationList,
  InvitationOffer,
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

const InvitationToken = pathParams({ token: Schema.String })

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
        "End the session of a refresh token (its access tokens lapse within their life), or with everywhere every session of its user (or of the bearer user token), whose access tokens are refused at once. With Cairn-Refresh-Cookie: 1 the refresh cookie is cleared"
      )
  )
  .add(
    HttpApiEndpoint.get("me", "/me")
      .addSuccess(Me)
      .annotate(RequiredScope, AUTHENTICATED)
      .annotate(OpenApi.Description, "Who the credentials belong to and the scopes they grant")
  )
  .add(
    HttpApiEndpoint.post("changePassword", "/me/password")
      .setPayload(ChangePassword)
      .addSuccess(TokenPair)
      .annotate(RequiredScope, AUTHENTICATED)
      .annotate(
        OpenApi.Description,
        "The signed-in user changes their own password (422 on current_password when it is not right; rate limited like sign-in): every other session of theirs ends, and this one continues with the tokens answered"
      )
  )
  .add(
    HttpApiEndpoint.get("invitation", "/invitations/:token")
      .setPath(InvitationToken)
      .addSuccess(InvitationOffer)
      .addError(detailBody(InvitationSpent))
      .annotate(RequiredScope, PUBLIC)
      .annotate(
        OpenApi.Description,
        "What a one-time link offers (an invitation's role and suggested username, or whose password a reset link sets); 410 once used or expired"
      )
  )
  .add(
    HttpApiEndpoint.post("acceptInvitation", "/invitations/:token/accept")
      .setPath(InvitationToken)
      .setPayload(AcceptInvitation)
      .addSuccess(TokenPair)
      .addError(detailBody(InvitationSpent))
      .annotate(RequiredScope, PUBLIC)
      .annotate(
        OpenApi.Description,
        "Spend a one-time link (rate limited like sign-in): an invitation creates the user with the username and password given, a reset link sets its user's password and ends their sessions; either signs in (as /auth/login answers)"
      )
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
const InvitationId = idPath("Invitation")

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
      .addError(detailBody(UserConflict))
      .annotate(RequiredScope, "users:write")
      .annotate(
        OpenApi.Description,
        "Change a user's role, password or disabled state (a new password or disabling ends their sessions; nobody disables themselves); promoting to admin or touching an admin needs admin"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/users/:id")
      .setPath(UserId)
      .annotate(RequiredScope, "users:write")
      .annotate(OpenApi.Description, "Delete a user and end their sessions; deleting an admin needs admin")
  )
  .add(
    HttpApiEndpoint.post("resetLink", "/users/:id/reset-link")
      .setPath(UserId)
      .setPayload(CreateResetLink)
      .addSuccess(CreatedInvitation, { status: 201 })
      .annotate(RequiredScope, "users:write")
      .annotate(
        OpenApi.Description,
        "A one-time link for the user to choose a new password (the token is answered this once; an admin's needs admin)"
      )
  )
  .add(
    HttpApiEndpoint.get("invitations", "/invitations")
      .addSuccess(InvitationList)
      .annotate(RequiredScope, "users:read")
      .annotate(OpenApi.Description, "The one-time links (invitations and password resets), masked to their first characters")
  )
  .add(
    HttpApiEndpoint.post("invite", "/invitations")
      .setPayload(CreateInvitation)
      .addSuccess(CreatedInvitation, { status: 201 })
      .annotate(RequiredScope, "users:write")
      .annotate(
        OpenApi.Description,
        "Invite a user by a one-time link (/invite/<token>, answered this once, stored hashed; an admin's needs admin)"
      )
  )
  .add(
    HttpApiEndpoint.del("withdrawInvitation", "/invitations/:id")
      .setPath(InvitationId)
      .addError(detailBody(InvitationNotFound))
      .annotate(RequiredScope, "users:write")
      .annotate(OpenApi.Description, "Withdraw a one-time link (invitation or password reset)")
  )
  .addError(detailBody(UserNotFound))
  .middleware(Authentication)
  .prefix("/api/v1/admin")
  .annotate(OpenApi.Title, "Users")
{}
