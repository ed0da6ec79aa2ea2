/**
 * The signed-in app's frame: the top bar (one menu button on a phone; sign out of this device beside
 * sign out everywhere), the navigation (the chat, the console's pages the user's scopes allow in
 * folding groups, the integrations' own sidebar sections) and the open page, a console page in the
 * `main` landmark (the chat has its own). Console pages load on first visit.
 */
import { type ComponentType, createElement, lazy, type MouseEvent, Suspense, useEffect, useMemo, useState } from "react"
import type { AuthSession } from "../shared/session.ts"
import { ChatPage } from "./Chat.tsx"
import { IntegrationSections } from "./integrations/SidebarSections.tsx"
import { NavGroup } from "./NavGroup.tsx"
import { pageAt, pageGroups, type PageProps, pages } from "./pages.ts"
import { navigate } from "./route.ts"
import { allows } from "./scopes.ts"
import { Icon } from "./ui/Icon.tsx"

/** One lazy component per page, made once (React keeps a lazy component's state by identity). */
const lazyPages = new Map<string, ComponentType<PageProps>>(pages.map((page) => [page.id, lazy(page.load)]))

const NavLink = (
  { href, icon, label, current, onGo }: { href: string; icon: string; label: string; current: boolean; onGo: () => void }
) => (
  <a
    href={href}
    className={`nav-link${current ? " current" : ""}`}
    aria-current={current ? "page" : undefined}
    onClick={(event) => {
      if (event.metaKey || event.ctrlKey || event.shiftKey) return
      event.preventDefault()
      onGo()
      navigate(href)
    }}
  >
    <Icon name={icon} />
    <span>{label}</span>
  </a>
)

/** The skip link lands in the chat's message box, on a console page on the page itself. */
const skipToContent = (event: MouseEvent<HTMLAnchorElement>) => {
  event.preventDefault()
  const content = document.getElementById("content")
  ;(content?.querySelector<HTMLElement>("[data-testid=composer] textarea") ?? content)?.focus()
}

export const Shell = ({ auth, path }: { readonly auth: AuthSession; readonly path: string }) => {
  const [navOpen, setNavOpen] = useState(false)
  const visible = useMemo(() => pages.filter((page) => allows(auth, page.reads)), [auth])
  const open = pageAt(path)
  const close = () => setNavOpen(false)
  // A conversation picked in the chat's list (shown in the menu on a phone) closes the menu too.
  useEffect(() => setNavOpen(false), [path])

  const content = (() => {
    if (!open) {
      const sessionId = /^\/chat\/([0-9a-f-]{36})$/.exec(path)?.[1]
      return <ChatPage auth={auth} sessionId={sessionId} />
    }
    if (!allows(auth, open.page.reads)) {
      return (
        <div className="empty">
          <p role="alert">Your account's scopes do not include this page.</p>
        </div>
      )
    }
    // Looked up, not made here: each page's lazy component is made once, at module load.
    const page = createElement(lazyPages.get(open.page.id)!, { auth, rest: open.rest })
    return (
      <Suspense
        fallback={
          <div className="empty" aria-busy="true">
            <p>Loading…</p>
          </div>
        }
      >
        {page}
      </Suspense>
    )
  })()

  return (
    <div className={`shell${navOpen ? " nav-open" : ""}${open ? "" : " on-chat"}`}>
      <a className="skip-link" href="#content" onClick={skipToContent}>Skip to content</a>
      <header className="topbar">
        <button type="button" className="icon nav-toggle" aria-label="Menu" aria-expanded={navOpen} onClick={() => setNavOpen(!navOpen)}>
          ☰
        </button>
        <strong>Cairn</strong>
        <span className="muted page-name">{open?.page.title ?? "Chat"}</span>
        <span className="spacer" />
        <a
          href="/account"
          className="muted"
          data-testid="signed-in-as"
          title="Your account"
          onClick={(event) => {
            event.preventDefault()
            navigate("/account")
          }}
        >
          {auth.user?.username}
        </a>
        <button type="button" onClick={() => void auth.logout(false)}>Sign out</button>
        <button type="button" className="secondary sign-out-everywhere" onClick={() => void auth.logout(true)}>
          Sign out everywhere
        </button>
      </header>
      <nav className="appnav" aria-label="Cairn">
        <NavLink href="/" icon="MessageSquare" label="Chat" current={!open} onGo={close} />
        {pageGroups.map((group) => {
          const inGroup = visible.filter((page) => page.group === group)
          return inGroup.length === 0 ?
            null :
            (
              <NavGroup
                key={group}
                id={group.toLowerCase()}
                title={<span>{group}</span>}
                holdsCurrent={inGroup.some((page) => page.id === open?.page.id)}
              >
                {inGroup.map((page) => (
                  <NavLink
                    key={page.id}
                    href={page.path}
                    icon={page.icon}
                    label={page.title}
                    current={open?.page.id === page.id}
                    onGo={close}
                  />
                ))}
              </NavGroup>
            )
        })}
        <IntegrationSections auth={auth} path={path} onGo={close} />
        {/* On a phone the top bar has room for one sign-out: the other is here. */}
        <button type="button" className="secondary phone-only" onClick={() => void auth.logout(true)}>Sign out everywhere</button>
      </nav>
      {open
        ? <main className="content" id="content" tabIndex={-1}>{content}</main>
        : <div className="content" id="content" tabIndex={-1}>{content}</div>}
    </div>
  )
}
