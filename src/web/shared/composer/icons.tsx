/** The composer's icons as inline SVG: no icon font, no emoji font needed, and they take the text colour. */
const Icon = ({ d }: { readonly d: string }) => (
  <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
    <path d={d} fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" />
  </svg>
)

export const AttachIcon = () => <Icon d="M21 11.5 12.5 20a5 5 0 0 1-7-7l8.5-8.5a3.5 3.5 0 0 1 5 5L10.5 18a2 2 0 0 1-3-3l7.5-7.5" />
export const MicIcon = () => <Icon d="M12 3a3 3 0 0 0-3 3v6a3 3 0 0 0 6 0V6a3 3 0 0 0-3-3zM5 11a7 7 0 0 0 14 0M12 18v3" />
export const StopIcon = () => <Icon d="M7 7h10v10H7z" />
export const WaitIcon = () => <Icon d="M6 12h.01M12 12h.01M18 12h.01" />
export const SendIcon = () => <Icon d="M4 12 20 4l-6 16-3-7-7-1z" />
export const DocumentIcon = () => <Icon d="M14 3H7a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V8zM14 3v5h5M9 13h6M9 17h6" />
