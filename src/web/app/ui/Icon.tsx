/**
 * Icons by name: the spec's known icon names (the names integrations use in their manifests), drawn
 * with Lucide. An unknown name falls back to `Plug`, as the spec says.
 */
import {
  Activity,
  BarChart3,
  Book,
  BookOpen,
  Bot,
  Brain,
  ClipboardList,
  Clock,
  Code2,
  Columns,
  Container,
  FileText,
  HardDrive,
  Hash,
  Heart,
  HelpCircle,
  Home,
  Key,
  Layers,
  LayoutDashboard,
  ListChecks,
  Lock,
  type LucideIcon,
  MessageSquare,
  Moon,
  Paperclip,
  Plug,
  ScrollText,
  Server,
  Settings,
  Shield,
  ShieldCheck,
  Sun,
  Users,
  Workflow,
  Wrench,
  Zap
} from "lucide-react"

/** The spec's "Known icon names", plus the few the app's own pages use. */
const icons: Record<string, LucideIcon> = {
  LayoutDashboard,
  Columns,
  BookOpen,
  Brain,
  HelpCircle,
  Settings,
  Zap,
  Plug,
  Bot,
  Layers,
  FileText,
  Paperclip,
  ClipboardList,
  Key,
  Shield,
  ShieldCheck,
  Activity,
  Server,
  Wrench,
  BarChart3,
  Users,
  HardDrive,
  Code2,
  Hash,
  Home,
  MessageSquare,
  Container,
  Clock,
  Heart,
  Lock,
  Sun,
  Moon,
  // The app's own pages.
  Book,
  ListChecks,
  ScrollText,
  Workflow
}

export type IconName = string

export const Icon = (
  { name, size = 16, label }: { readonly name: IconName | undefined; readonly size?: number; readonly label?: string }
) => {
  const Drawn = (name && Object.hasOwn(icons, name) ? icons[name] : undefined) ?? Plug
  return label ? <Drawn size={size} aria-label={label} role="img" /> : <Drawn size={size} aria-hidden="true" />
}

/** The name actually drawn for `name` (the tests and the sidebar's data attribute read it). */
export const drawnIconName = (name: string | undefined) => (name && Object.hasOwn(icons, name) ? name : "Plug")
