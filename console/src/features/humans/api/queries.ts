import { useQuery } from "@tanstack/react-query";
import { apiGet } from "../../../api/client";
import { humanKeys } from "./keys";

export function useHumanDecisions(subjectId: string, cursor: string) {
  return useQuery({
    queryKey: humanKeys.subject(subjectId, cursor),
    queryFn: () =>
      apiGet("/admin/ai/subjects/{subject_id}/human-decisions", {
        path: { subject_id: subjectId },
        query: { cursor, limit: 50 },
      }),
  });
}
