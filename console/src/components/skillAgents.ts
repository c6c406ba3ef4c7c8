import { useQuery } from "@tanstack/react-query";
import { apiGet } from "../api/client";

/** Which agent each skill belongs to, by skill id: where a skill's change, or its routing, links to. */
export function useSkillAgents(): Record<string, string> {
  const owners = useQuery({
    queryKey: ["skills", "agents"],
    queryFn: async () => {
      const skills = await apiGet("/admin/ai/skills");
      return Object.fromEntries(skills.items.map((skill) => [skill.id, skill.agent_id]));
    },
  });
  return owners.data ?? {};
}
